SELECT 1;
   
